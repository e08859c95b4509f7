-- AlterTable
ALTER TABLE "SessionChannel" ADD COLUMN     "claimRefusedAt" TIMESTAMP(3);
