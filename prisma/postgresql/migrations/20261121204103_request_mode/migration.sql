-- AlterTable
ALTER TABLE "RequestRecord" ADD COLUMN     "mode" TEXT NOT NULL DEFAULT 'paid';
