"""The aggregate stage, entered through ``front.aggregate`` (and ``front.run_comment``): every shard folder
judged against the plan (artifacts, aggregate, verdict), the test history's triage (history),
what the run means (triage, quarantine, overhead) and how it is told: summary and comment (render,
failures, groups, frames, md, templates), files (outputs), GitHub (github, comment, joblinks)."""
