-- AlterTable
ALTER TABLE "Plan" ADD COLUMN     "remintPolicy" TEXT NOT NULL DEFAULT 'rotating';
