-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "settlement" TEXT NOT NULL DEFAULT 'before_response';
