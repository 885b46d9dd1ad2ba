"""Shape and type inference: symbolic dims, shapes, per-node inference contexts and the ShapeRefiner."""
