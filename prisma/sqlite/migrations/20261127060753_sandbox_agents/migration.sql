-- CreateTable
CREATE TABLE "SandboxAgent" (
    "agentId" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "encryptedPrivateKey" TEXT NOT NULL,
    "encryptedToken" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SandboxAgent_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SandboxAgent_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "SandboxAgent_sellerId_idx" ON "SandboxAgent"("sellerId");
