"""claude"""
