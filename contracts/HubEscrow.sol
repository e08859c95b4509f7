// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP3009} from "./EIP3009.sol";

/**
 * Reserve-and-pay-actual for ceiling-priced calls, payable by an unmodified x402 `exact` client:
 * the challenge names this contract as `payTo`, so the payer signs an EIP-3009 authorization of
 * the ceiling to it. After the call, hub's settler (the operator) submits it here: in one
 * transaction the escrow takes the authorization, pays the seller what was used and returns the
 * rest to the payer. It holds nothing between transactions.
 *
 * The operator chooses the split within what the payer authorized, as hub's settler already
 * chooses what to settle; the contract guarantees that an authorization is paid out once, only to
 * the payee and the payer, and never more than its value. That a deposited authorization's value
 * is here is the operator's check (see `settle`).
 */
contract HubEscrow {
    using SafeERC20 for IERC20;

    struct Authorization {
        address from;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }

    struct Signature {
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    address public immutable operator;

    /// keccak256(token, payer, nonce) of every authorization paid out.
    mapping(bytes32 key => bool paid) public settled;

    event Settled(
        address indexed token, address indexed payer, bytes32 indexed nonce, address payee, uint256 charged, uint256 returned
    );

    error NotOperator(address caller);
    error ChargeExceedsAuthorization(uint256 charged, uint256 value);
    error AlreadySettled(address token, address payer, bytes32 nonce);
    error NotDeposited(address token, address payer, bytes32 nonce);

    constructor(address operator_) {
        operator = operator_;
    }

    /**
     * Takes the authorization and pays it out: `charged` to `payee`, the rest back to the payer.
     * `deposited` is for an authorization someone submitted to the token directly (anyone can):
     * its value is then already here, and only its payout is left. The contract checks only that
     * the token marks the authorization used, which a payer's cancel or a payment elsewhere also
     * does; that the value came here is the operator's to check first, and it does (it pays out a
     * deposit only after finding the token's transfer of this authorization to the escrow).
     */
    function settle(
        address token,
        Authorization calldata authorization,
        Signature calldata signature,
        address payee,
        uint256 charged,
        bool deposited
    ) external {
        if (msg.sender != operator) revert NotOperator(msg.sender);
        if (charged > authorization.value) revert ChargeExceedsAuthorization(charged, authorization.value);
        bytes32 key = keccak256(abi.encode(token, authorization.from, authorization.nonce));
        if (settled[key]) revert AlreadySettled(token, authorization.from, authorization.nonce);
        settled[key] = true;

        if (deposited) {
            if (!EIP3009(token).authorizationState(authorization.from, authorization.nonce)) {
                revert NotDeposited(token, authorization.from, authorization.nonce);
            }
        } else {
            EIP3009(token).transferWithAuthorization(
                authorization.from,
                address(this),
                authorization.value,
                authorization.validAfter,
                authorization.validBefore,
                authorization.nonce,
                signature.v,
                signature.r,
                signature.s
            );
        }

        uint256 returned = authorization.value - charged;
        if (charged > 0) IERC20(token).safeTransfer(payee, charged);
        if (returned > 0) IERC20(token).safeTransfer(authorization.from, returned);
        emit Settled(token, authorization.from, authorization.nonce, payee, charged, returned);
    }
}
