-- AlterTable
ALTER TABLE "Seller" DROP COLUMN "jwkPrivateJson",
DROP COLUMN "jwksJson";

-- CreateTable
CREATE TABLE "EncryptionKey" (
    "id" TEXT NOT NULL,
    "sellerId" TEXT NOT NULL,
    "publicJwk" TEXT NOT NULL,
    "encryptedPrivateKey" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMP(3),

    CONSTRAINT "EncryptionKey_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "EncryptionKey_sellerId_status_idx" ON "EncryptionKey"("sellerId", "status");

-- AddForeignKey
ALTER TABLE "EncryptionKey" ADD CONSTRAINT "EncryptionKey_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;
