// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {EIP3009} from "./EIP3009.sol";

/**
 * A USDC-like stablecoin for development, the demo and tests: 6 decimals, EIP-3009 payments under
 * an EIP-712 domain whose name is the token's name, and a minter role that the demo faucet uses.
 * It has no blocklist, pause or upgradeability: nothing hub's payment path depends on.
 */
contract HubUSD is EIP3009, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    /// `version_` is the EIP-712 domain version that x402 requirements carry in `extra.version`.
    constructor(string memory name_, string memory symbol_, string memory version_, address admin)
        ERC20(name_, symbol_)
        EIP712(name_, version_)
    {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(MINTER_ROLE, admin);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// The EIP-712 domain version, read by x402 facilitators to diagnose a domain mismatch.
    function version() external view returns (string memory) {
        return _EIP712Version();
    }

    function mint(address to, uint256 value) external onlyRole(MINTER_ROLE) {
        _mint(to, value);
    }
}
