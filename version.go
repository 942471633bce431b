package hone

// Version is hone's version. The Python client in clients/python carries
// the same one (__version__ in hone.py); a test keeps them equal.
const Version = "0.1.0"
