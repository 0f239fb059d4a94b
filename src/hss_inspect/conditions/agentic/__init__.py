"""The agentic condition: inspection tools and the loop that runs them (paper Sec. 3.3)."""
