// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// What pulls a deposit's tokens from its payer and hands them to the channel contract.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

/**
 * hub's implementation of the on-chain side of x402's `batch-settlement` scheme, for the
 * development chain: payment channels a payer deposits into once, and a receiver claims from in
 * batches with the payer's cumulative vouchers. Written from the scheme's specification; its
 * functions, events, EIP-712 domain and type hashes are the scheme's, so x402's unmodified client
 * signs for it. The dev chain places it at the address that client signs for.
 *
 * A channel is named by the EIP-712 hash of its immutable config. It holds `balance` (deposited)
 * and `totalClaimed` (claimed by the receiver, never above the balance); a claim moves no tokens,
 * `settle` sends a receiver everything claimed for it and not yet sent. A cooperative refund
 * (`refund` by the receiver side, `refundWithSignature` under the receiver authorizer's signature)
 * returns part of what is not claimed to the payer; `multicall` lets a claim and a refund land in
 * one transaction. The payer's timed withdrawal (`initiateWithdraw`, then `finalizeWithdraw` once
 * the channel's `withdrawDelay` has passed) takes back what is not claimed without the receiver's
 * consent: the receiver has the delay to claim what it was paid first.
 */
contract HubBatchSettlement is EIP712, Multicall {
    using SafeERC20 for IERC20;

    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct Channel {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    /// The one collector deposits may come through: it takes an ERC-3009 receiveWithAuthorization.
    address public immutable erc3009Collector;

    mapping(bytes32 channelId => Channel) public channels;
    mapping(address receiver => mapping(address token => ReceiverTotals)) public receivers;
    /// How many cooperative refunds the channel has had: the nonce the next refund's signature names.
    mapping(bytes32 channelId => uint256) public refundNonce;
    /// The payer's timed withdrawal under way on the channel, if any (`initiatedAt` 0: none).
    mapping(bytes32 channelId => PendingWithdrawal) public pendingWithdrawals;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);

    error ZeroAmount();
    error ZeroReceiverAuthorizer();
    error WithdrawDelayOutOfRange(uint40 withdrawDelay);
    error UnknownCollector(address collector);
    error DepositShort(uint256 expected, uint256 received);
    error EmptyBatch();
    error MixedAuthorizers();
    error InvalidAuthorizerSignature();
    error NotReceiverSide(address caller);
    error ClaimAboveVoucher(uint128 totalClaimed, uint128 maxClaimableAmount);
    error ClaimAboveBalance(uint128 totalClaimed, uint128 balance);
    error ClaimBelowClaimed(uint128 totalClaimed, uint128 alreadyClaimed);
    error InvalidVoucherSignature(bytes32 channelId);
    error InvalidRefundNonce(uint256 nonce, uint256 expected);
    error NothingToRefund(bytes32 channelId);
    error NotPayerSide(address caller);
    error WithdrawPending(bytes32 channelId);
    error NoWithdrawPending(bytes32 channelId);
    error WithdrawNotReady(uint40 finalizeAfter);

    constructor(address erc3009Collector_) EIP712("x402 Batch Settlement", "1") {
        erc3009Collector = erc3009Collector_;
    }

    /// The channel's id: the EIP-712 hash of its config, bound to this chain and this contract.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH, getChannelId(c.voucher.channel), c.voucher.maxClaimableAmount, c.totalClaimed
                )
            );
        }
        return _hashTypedDataV4(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    /**
     * Adds `amount` to the channel, pulled from its payer by the collector (anyone may submit: the
     * payer's signed authorization, which the collector checks, is what moves the tokens). The
     * tokens must have arrived, whatever the collector says.
     */
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
    {
        if (amount == 0) revert ZeroAmount();
        if (config.receiverAuthorizer == address(0)) revert ZeroReceiverAuthorizer();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange(config.withdrawDelay);
        }
        if (collector != erc3009Collector) revert UnknownCollector(collector);
        bytes32 channelId = getChannelId(config);
        IERC20 token = IERC20(config.token);
        uint256 before = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received != amount) revert DepositShort(amount, received);

        Channel storage channel = channels[channelId];
        if (channel.balance == channel.totalClaimed && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        channel.balance += amount;
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    /// Claims vouchers, sent by each row's receiver or receiver authorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotReceiverSide(msg.sender);
            _claim(voucherClaims[i]);
        }
    }

    /// Claims vouchers of many channels at once, authorized by their one receiver authorizer's signature; anyone may relay it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature) external {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert MixedAuthorizers();
        }
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// Sends the receiver everything claimed for it in `token` and not sent yet. Anyone may call it.
    function settle(address receiver, address token) external {
        ReceiverTotals storage totals = receivers[receiver][token];
        uint128 amount = totals.totalClaimed - totals.totalSettled;
        if (amount == 0) return;
        totals.totalSettled = totals.totalClaimed;
        IERC20(token).safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// Returns up to `amount` of what is not claimed to the payer, sent by the channel's receiver or receiver authorizer.
    function refund(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotReceiverSide(msg.sender);
        _refund(config, getChannelId(config), amount);
    }

    /**
     * Returns up to `amount` of what is not claimed to the payer, authorized by the receiver
     * authorizer's signature of the channel's current refund nonce; anyone may relay it. The nonce
     * makes each signature good for one refund.
     */
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce(nonce, refundNonce[channelId]);
        bytes32 digest = getRefundDigest(channelId, nonce, amount);
        if (!SignatureChecker.isValidSignatureNow(config.receiverAuthorizer, digest, receiverAuthorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        _refund(config, channelId, amount);
    }

    /// Sends the payer `amount`, or all that is not claimed when that is less; the refund nonce moves on.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroAmount();
        Channel storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 refunded = amount < available ? amount : available;
        if (refunded == 0) revert NothingToRefund(channelId);
        channel.balance -= refunded;
        refundNonce[channelId] += 1;
        IERC20(config.token).safeTransfer(config.payer, refunded);
        emit Refunded(channelId, msg.sender, refunded, channel.balance);
    }

    /**
     * Starts the payer's timed withdrawal of up to `amount` (sent by the payer or its authorizer):
     * it can be finalized once the channel's `withdrawDelay` has passed, and the receiver may claim
     * meanwhile. One at a time per channel.
     */
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotPayerSide(msg.sender);
        if (amount == 0) revert ZeroAmount();
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawPending(channelId);
        pending.amount = amount;
        pending.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /**
     * Finishes a timed withdrawal whose delay has passed (anyone may send it): the payer gets the
     * amount asked for, or all that is not claimed when that is less; what was claimed stays the
     * receiver's.
     */
    function finalizeWithdraw(ChannelConfig calldata config) external {
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt == 0) revert NoWithdrawPending(channelId);
        uint40 finalizeAfter = pending.initiatedAt + config.withdrawDelay;
        if (block.timestamp < finalizeAfter) revert WithdrawNotReady(finalizeAfter);
        delete pendingWithdrawals[channelId];
        Channel storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 withdrawn = pending.amount < available ? pending.amount : available;
        channel.balance -= withdrawn;
        if (withdrawn > 0) IERC20(config.token).safeTransfer(config.payer, withdrawn);
        emit WithdrawFinalized(channelId, msg.sender, withdrawn, channel.balance);
    }

    /**
     * Raises a channel's claimed total to `totalClaimed`, within the payer's voucher and the
     * balance. A claim at the total already claimed changes nothing, so a batch sent twice claims once.
     */
    function _claim(VoucherClaim calldata c) private {
        ChannelConfig calldata config = c.voucher.channel;
        bytes32 channelId = getChannelId(config);
        Channel storage channel = channels[channelId];
        if (c.totalClaimed > c.voucher.maxClaimableAmount) revert ClaimAboveVoucher(c.totalClaimed, c.voucher.maxClaimableAmount);
        if (c.totalClaimed > channel.balance) revert ClaimAboveBalance(c.totalClaimed, channel.balance);
        if (c.totalClaimed < channel.totalClaimed) revert ClaimBelowClaimed(c.totalClaimed, channel.totalClaimed);
        if (c.totalClaimed == channel.totalClaimed) return;

        bytes32 digest = getVoucherDigest(channelId, c.voucher.maxClaimableAmount);
        bool signed = config.payerAuthorizer != address(0)
            ? ECDSA.recover(digest, c.signature) == config.payerAuthorizer
            : SignatureChecker.isValidSignatureNow(config.payer, digest, c.signature);
        if (!signed) revert InvalidVoucherSignature(channelId);

        uint128 delta = c.totalClaimed - channel.totalClaimed;
        channel.totalClaimed = c.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, c.totalClaimed);
    }
}
