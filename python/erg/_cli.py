# SPDX-License-Identifier: MIT
"""What the command-line modules share; imports nothing of liberg."""
import argparse


def help_formatter():
    """argparse formatter whose usage line reads "Usage: erg ...", as the erg command's do."""
    class Formatter(argparse.HelpFormatter):
        def add_usage(self, usage, actions, groups, prefix=None):
            super().add_usage(usage, actions, groups, "Usage: ")
    return Formatter
