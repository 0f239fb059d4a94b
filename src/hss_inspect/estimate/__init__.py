"""`hss-inspect estimate`, before anything is sent: each request as the task would build it
(`requests`: images, bytes, image tokens, the fit of frames to the context window, what is
already prepared), the bill under each caching strategy (`costs`: pure arithmetic over
those requests, a pilot log or Table 1, and prices), and their text (`text`)."""
