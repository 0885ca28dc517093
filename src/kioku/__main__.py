"""``python -m kioku`` runs the command line."""

from kioku.interfaces.cli.entry import main

if __name__ == "__main__":
    main()
