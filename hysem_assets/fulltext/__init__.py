"""Open-access full text: find each record's PDF through Unpaywall and keep only valid copies."""
