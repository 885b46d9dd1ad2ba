"""What a model costs, as formulas in its input dims: FLOPs and MACs per node (one cost rule per op family, beside
the shape rules), bytes read and written, parameters, and the peak of live activations. `model.py` walks an
analysed model, `memory.py` the liveness, `formula.py` sums and evaluates, `report.py` the tables the CLI, the
editor and the graph page show. Conventions and sources: docs/cost.md.
"""
