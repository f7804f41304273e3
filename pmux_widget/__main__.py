from pmux_widget.cli.commands import main

raise SystemExit(main())
