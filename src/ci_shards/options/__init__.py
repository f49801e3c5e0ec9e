"""Every option of the CLI declared once, as data (``declared``), and the typed options each stage takes (``typed``).

From one ``Option`` record come the argparse argument (``spec.add_options``), the config key it reads and how
that key is checked (``config.parse_config``), the row of docs/configuration.md's key table and the action input
that feeds it (both checked by tests/unit/test_options.py). A new option is one record in ``declared``.
"""
