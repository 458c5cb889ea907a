"""The headless front-end: `opencode -p` (run, with run_request and
run_report, which `opencode serve` and its attached client share) and the one-shot commands
`opencode tool`, `changes` and `export` (oneshot)."""
