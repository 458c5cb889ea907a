"""A tiny greeter: the project opencode's scripted demo works on."""


def greet(name: str) -> str:
    return "Helo, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
