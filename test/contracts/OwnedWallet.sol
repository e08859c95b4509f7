// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/**
 * A smart-contract wallet for tests, as agents' smart wallets behave toward hub: it holds the tokens,
 * and a signature is its own (ERC-1271) when its owner's key signed the hash. The owner sends the
 * wallet's transactions through `execute`, and may hand the wallet to another key (`rotate`), after
 * which what the old key signed is no longer the wallet's.
 */
contract OwnedWallet is IERC1271 {
    address public owner;

    error NotOwner(address caller);
    error CallFailed(bytes reason);

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecover(hash, signature);
        return error == ECDSA.RecoverError.NoError && signer == owner ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }

    function rotate(address newOwner) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        owner = newOwner;
    }

    function execute(address to, bytes calldata data) external returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        (bool ok, bytes memory result) = to.call(data);
        if (!ok) revert CallFailed(result);
        return result;
    }
}
