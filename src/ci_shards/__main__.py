from ci_shards.cli import main

raise SystemExit(main())
