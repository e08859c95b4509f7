-- CreateTable
CREATE TABLE "RateCount" (
    "name" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "windowStart" TIMESTAMP(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "RateCount_pkey" PRIMARY KEY ("name","key","windowStart")
);
