-- CreateTable
CREATE TABLE "SandboxAgent" (
    "agentId" TEXT NOT NULL,
    "sellerId" TEXT NOT NULL,
    "encryptedPrivateKey" TEXT NOT NULL,
    "encryptedToken" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SandboxAgent_pkey" PRIMARY KEY ("agentId")
);

-- CreateIndex
CREATE INDEX "SandboxAgent_sellerId_idx" ON "SandboxAgent"("sellerId");

-- AddForeignKey
ALTER TABLE "SandboxAgent" ADD CONSTRAINT "SandboxAgent_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SandboxAgent" ADD CONSTRAINT "SandboxAgent_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;
