-- CreateTable
CREATE TABLE "RequestTally" (
    "sellerId" TEXT NOT NULL,
    "minute" TIMESTAMP(3) NOT NULL,
    "sandbox" BOOLEAN NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "RequestTally_pkey" PRIMARY KEY ("sellerId","minute","sandbox","lifecycle")
);

-- AddForeignKey
ALTER TABLE "RequestTally" ADD CONSTRAINT "RequestTally_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;
