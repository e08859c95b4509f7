-- CreateTable
CREATE TABLE "SandboxReversal" (
    "paymentId" TEXT NOT NULL PRIMARY KEY,
    "refundedMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeStatus" TEXT,
    "disputeLostMicros" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "SandboxReversal_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "PaymentAttempt" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
