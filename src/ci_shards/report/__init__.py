"""The aggregate stage: every shard folder judged against the plan (artifacts, aggregate, verdict),
what the run means (triage, quarantine, overhead) and how it is told: summary and comment (render,
failures, groups, frames, md, templates), files (outputs), GitHub (github, comment, joblinks)."""
