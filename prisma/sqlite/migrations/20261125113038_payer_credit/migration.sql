-- DropIndex
DROP INDEX "PaymentAttempt_sellerId_createdAt_idx";

-- CreateTable
CREATE TABLE "PayerCredit" (
    "sellerId" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "balanceMicros" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("sellerId", "payer"),
    CONSTRAINT "PayerCredit_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CreditEntry" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "deltaMicros" BIGINT NOT NULL,
    "reason" TEXT NOT NULL,
    "paymentAttemptId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "CreditEntry_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "CreditEntry_sellerId_payer_createdAt_idx" ON "CreditEntry"("sellerId", "payer", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "CreditEntry_paymentAttemptId_reason_key" ON "CreditEntry"("paymentAttemptId", "reason");

-- CreateIndex
CREATE INDEX "PaymentAttempt_sellerId_createdAt_id_idx" ON "PaymentAttempt"("sellerId", "createdAt", "id");
