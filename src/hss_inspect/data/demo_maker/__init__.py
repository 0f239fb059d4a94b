"""The demo set's generator, out of what a run imports: the scenes and their geometry
(`scenes`), the rows and the writer (`tasks`)."""
