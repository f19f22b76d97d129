from ragmeter.cli.main import main

main()
