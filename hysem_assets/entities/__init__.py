"""Named entities and the relations between them: trained taggers, their graph and questions over it."""
