"""``python -m kioku`` runs the command line."""

from kioku.interfaces.cli.main import main

if __name__ == "__main__":
    main()
