-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "AgentClaim" (
    "id" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "sellerId" TEXT,
    "payOrigin" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "releaseTokenHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "buyerId" TEXT,
    "confirmedAt" TIMESTAMP(3),
    "releasedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentClaim_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentClaim_tokenHash_key" ON "AgentClaim"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "AgentClaim_releaseTokenHash_key" ON "AgentClaim"("releaseTokenHash");

-- CreateIndex
CREATE INDEX "AgentClaim_agentId_createdAt_idx" ON "AgentClaim"("agentId", "createdAt");

-- CreateIndex
CREATE INDEX "AgentClaim_email_createdAt_idx" ON "AgentClaim"("email", "createdAt");

-- CreateIndex
CREATE INDEX "Agent_updatedAt_idx" ON "Agent"("updatedAt");

-- AddForeignKey
ALTER TABLE "AgentClaim" ADD CONSTRAINT "AgentClaim_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
