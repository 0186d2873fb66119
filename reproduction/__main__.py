from .driver import main

raise SystemExit(main())
