-- AlterTable
ALTER TABLE "SessionChannel" ADD COLUMN "claimRefusedAt" DATETIME;
