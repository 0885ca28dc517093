"""Consolidation and active forgetting (spec 001 記憶の固定化, 能動的忘却; spec 003 §7; spec 004).

Pure core, no I/O and no clock: the shared records (:mod:`.model`), the classification of
procedural content (:mod:`.classify`), extractive knowledge and procedure candidates
(:mod:`.extract`), the lexical entailment check (:mod:`.entail`), claims and the offline
contradiction rules (:mod:`.claims`), text similarity (:mod:`.similarity`), the forgetting
thresholds and protection (:mod:`.forgetting`), spec 004's importance and capacity
(:mod:`.importance`) and spec 003's salience (:mod:`.salience`). The service runs the pipeline
with these pieces and the ports.
"""
