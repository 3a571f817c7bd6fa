from recon.cli import main

raise SystemExit(main())
