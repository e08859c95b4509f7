-- AlterTable
ALTER TABLE "SessionChannel" ADD COLUMN     "withdrawRequestedAt" BIGINT NOT NULL DEFAULT 0;
