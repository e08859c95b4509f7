-- AlterTable
ALTER TABLE "Access" ALTER COLUMN "provisioningState" SET DEFAULT 'active';
