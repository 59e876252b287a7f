"""A reviewer's deliverables: the PRISMA 2020 flow, the evidence table and the review report."""
