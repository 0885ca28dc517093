"""What a store migration agrees on with the store adapters: the tables it copies
(:mod:`.tables`), the canonical form of their rows (:mod:`.canonical`) and the access each
adapter gives to its tables (:mod:`.access`). The copy itself is ``kioku.service.transfer``."""
