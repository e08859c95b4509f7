-- AlterTable
ALTER TABLE "PlanMeterPrice" ADD COLUMN     "description" TEXT;

-- AlterTable
ALTER TABLE "Service" ADD COLUMN     "routesJson" TEXT NOT NULL DEFAULT '[]';
