"""What the model under evaluation is sent, and how its answer is taken (paper Sec. 3)."""
