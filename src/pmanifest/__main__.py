from pmanifest.cli import main

main()
