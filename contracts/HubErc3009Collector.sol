// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP3009} from "./EIP3009.sol";

/**
 * The ERC-3009 deposit collector of hub's batch-settlement channels (HubBatchSettlement): x402's
 * client signs a `receiveWithAuthorization` of its deposit to this contract's address, with the
 * nonce bound to the channel (keccak256 of the channel id and a salt), so the authorization can
 * only fund that channel. Only the channel contract calls it; it takes the tokens and passes them
 * on in the same call, holding nothing.
 */
contract HubErc3009Collector {
    using SafeERC20 for IERC20;

    address public immutable settlement;

    error NotSettlement(address caller);

    constructor(address settlement_) {
        settlement = settlement_;
    }

    /// `data` is abi.encode(validAfter, validBefore, salt, signature), as x402's facilitator encodes it.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != settlement) revert NotSettlement(msg.sender);
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        EIP3009(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        IERC20(token).safeTransfer(settlement, amount);
    }
}
