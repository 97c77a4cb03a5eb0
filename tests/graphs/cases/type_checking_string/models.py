class Request:
    def finish(self):
        return True
