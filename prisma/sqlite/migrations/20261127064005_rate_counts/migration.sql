-- CreateTable
CREATE TABLE "RateCount" (
    "name" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "windowStart" DATETIME NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("name", "key", "windowStart")
);
