from cutegen.cli import main

raise SystemExit(main())
