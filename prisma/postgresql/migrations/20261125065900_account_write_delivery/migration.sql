-- AlterTable
ALTER TABLE "AccountWrite" ADD COLUMN     "lastHttpStatus" INTEGER,
ADD COLUMN     "lastReply" TEXT;

-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "accountWriteVariant" TEXT NOT NULL DEFAULT 'original';
