from pmux_widget.cli import main

raise SystemExit(main())
