"""The judge audit: known answers graded by the production judge (task `hss_judge_audit`)."""
