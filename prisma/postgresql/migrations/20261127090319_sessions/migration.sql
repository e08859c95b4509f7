-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN     "channelId" TEXT;

-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "x402SchemesJson" TEXT NOT NULL DEFAULT '["exact"]';

-- CreateTable
CREATE TABLE "SessionChannel" (
    "id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "payerAuthorizer" TEXT NOT NULL,
    "receiver" TEXT NOT NULL,
    "receiverAuthorizer" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "withdrawDelay" INTEGER NOT NULL,
    "salt" TEXT NOT NULL,
    "balance" BIGINT NOT NULL,
    "totalClaimed" BIGINT NOT NULL DEFAULT 0,
    "charged" BIGINT NOT NULL DEFAULT 0,
    "signedMaxClaimable" BIGINT NOT NULL DEFAULT 0,
    "voucherSignature" TEXT,
    "heldBy" TEXT,
    "heldUntil" TIMESTAMP(3),
    "lastRequestAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionChannel_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SessionChannel_receiver_token_idx" ON "SessionChannel"("receiver", "token");
