-- CreateTable
CREATE TABLE "SandboxReversal" (
    "paymentId" TEXT NOT NULL,
    "refundedMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeStatus" TEXT,
    "disputeLostMicros" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SandboxReversal_pkey" PRIMARY KEY ("paymentId")
);

-- AddForeignKey
ALTER TABLE "SandboxReversal" ADD CONSTRAINT "SandboxReversal_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "PaymentAttempt"("id") ON DELETE CASCADE ON UPDATE CASCADE;
